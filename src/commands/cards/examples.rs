//! The example cards `lore cards init` writes: a small software team, one card per kind.
//!
//! Every example passes `lore cards check` (tested), and the event refs the person.

/// `(path under the vault, file text)` of every example card.
pub(crate) const EXAMPLES: [(&str, &str); 6] = [
    ("people/Priya.md", PRIYA),
    ("events/the Friday deploy.md", FRIDAY_DEPLOY),
    ("places/the war room.md", WAR_ROOM),
    ("things/the staging cluster.md", STAGING),
    ("slang/ship it Friday.md", SHIP_IT),
    ("on-call rotation.md", ON_CALL),
];

/// A sentence that fires the example person, for the `try` hint.
pub(crate) const TRY_SENTENCE: &str = "Did Priya sign off on the Friday deploy?";

const PRIYA: &str = "---
kind: people
title: Priya
keywords: [Priya, platform team]
aliases: [Priya R]
refs: [the Friday deploy]
priority: 1
---
## who
Tech lead of the platform team; owns the deploy pipeline and the staging cluster.

## stance
Friendly and blunt. She reviews my infrastructure pull requests and expects tests with them.

## recent
Moved the release train from daily to weekly in March.

## impression
Calm in incidents, allergic to meetings that could have been a message.

## correspondence
Private working notes: never injected, never matched. Ask her about the on-call swap.
";

const FRIDAY_DEPLOY: &str = "---
kind: event
title: the Friday deploy
keywords: [Friday deploy, release train, weekly release]
refs: [Priya]
---
## when
Every Friday at 14:00, since the team moved to weekly releases.

## who
Priya runs it; whoever merged that week stays on the call.

## what
The weekly release of every service to production, from the staging cluster.

## stance
Worth it: smaller batches, but nobody likes a Friday rollback.

## followup
Agree on a freeze rule for the week of the conference.
";

const WAR_ROOM: &str = "---
kind: place
title: the war room
keywords: [war room, incident room]
---
## where
The small meeting room next to the kitchen, third floor; the big screen shows the dashboards.

## relation
Where the team gathers for incidents and for the Friday deploy.

## recent
The screen's HDMI cable was finally replaced.
";

const STAGING: &str = "---
kind: thing
title: the staging cluster
keywords: [staging cluster, staging]
---
## what
A scaled-down copy of production: three nodes, shared by every team.

## usage
Every release soaks there for a day before the Friday deploy.

## recent
Ran out of disk twice in May; log retention is now three days.
";

const SHIP_IT: &str = "---
kind: slang
title: ship it Friday
keywords: [ship it Friday, ship it]
---
## meaning
Half a joke: a change is small and safe enough to go out with this week's release.

## origin
Priya's reply to a one-line typo fix that waited two weeks for review.

## usage
Said in review comments; never said about database migrations.
";

const ON_CALL: &str = "---
title: on-call rotation
keywords: [on-call, pager duty]
---
One engineer carries the pager for a week, Monday to Monday. Handover happens at the Monday
stand-up; the outgoing person writes a short summary of open incidents.
";
