-- The tables OpenCode 1.18 keeps its sessions in (DDL as opencode-ai 1.18.33 creates it),
-- with one session (and a sub-agent session) in the shape it writes. The import test builds
-- an opencode.db from it in a temporary folder.
PRAGMA foreign_keys = ON;
CREATE TABLE `project` (
          `id` text PRIMARY KEY,
          `worktree` text NOT NULL,
          `vcs` text,
          `name` text,
          `icon_url` text,
          `icon_url_override` text,
          `icon_color` text,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `time_initialized` integer,
          `sandboxes` text NOT NULL,
          `commands` text
        );
CREATE TABLE `session` (
          `id` text PRIMARY KEY,
          `project_id` text NOT NULL,
          `workspace_id` text,
          `parent_id` text,
          `slug` text NOT NULL,
          `directory` text NOT NULL,
          `path` text,
          `title` text NOT NULL,
          `version` text NOT NULL,
          `share_url` text,
          `summary_additions` integer,
          `summary_deletions` integer,
          `summary_files` integer,
          `summary_diffs` text,
          `metadata` text,
          `cost` real DEFAULT 0 NOT NULL,
          `tokens_input` integer DEFAULT 0 NOT NULL,
          `tokens_output` integer DEFAULT 0 NOT NULL,
          `tokens_reasoning` integer DEFAULT 0 NOT NULL,
          `tokens_cache_read` integer DEFAULT 0 NOT NULL,
          `tokens_cache_write` integer DEFAULT 0 NOT NULL,
          `revert` text,
          `permission` text,
          `agent` text,
          `model` text,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `time_compacting` integer,
          `time_archived` integer,
          CONSTRAINT `fk_session_project_id_project_id_fk` FOREIGN KEY (`project_id`) REFERENCES `project`(`id`) ON DELETE CASCADE
        );
CREATE TABLE `message` (
          `id` text PRIMARY KEY,
          `session_id` text NOT NULL,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `data` text NOT NULL,
          CONSTRAINT `fk_message_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE
        );
CREATE TABLE `part` (
          `id` text PRIMARY KEY,
          `message_id` text NOT NULL,
          `session_id` text NOT NULL,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `data` text NOT NULL,
          CONSTRAINT `fk_part_message_id_message_id_fk` FOREIGN KEY (`message_id`) REFERENCES `message`(`id`) ON DELETE CASCADE
        );
INSERT INTO project (id, worktree, vcs, name, time_created, time_updated, sandboxes) VALUES ('global', '/', NULL, NULL, 1796126400000, 1796126400000, '[]');
INSERT INTO session (id, project_id, workspace_id, parent_id, slug, directory, path, title, version, time_created, time_updated) VALUES ('ses_dce9a1f0bffeQm2XkV7pLr4TzN', 'global', NULL, NULL, 'brave-river', '/home/ada/fx', NULL, 'Cache the exchange rates', '1.18.33', 1796126400000, 1796126460000);
INSERT INTO session (id, project_id, workspace_id, parent_id, slug, directory, path, title, version, time_created, time_updated) VALUES ('ses_dce9a1f0cffeChildTaskSub01', 'global', NULL, 'ses_dce9a1f0bffeQm2XkV7pLr4TzN', 'calm-lake', '/home/ada/fx', NULL, 'Explore the rate client (@explore subagent)', '1.18.33', 1796126400000, 1796126460000);
INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_2315a0000001AaBbCcDdEeFf01', 'ses_dce9a1f0bffeQm2XkV7pLr4TzN', 1796126400100, 1796126400100, '{"role":"user","time":{"created":1796126400100},"agent":"build","model":{"providerID":"anthropic","modelID":"claude-sonnet-4-5"},"summary":{"diffs":[]}}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_2315a0000101Xx', 'msg_2315a0000001AaBbCcDdEeFf01', 'ses_dce9a1f0bffeQm2XkV7pLr4TzN', 1796126400100, 1796126400100, '{"type":"text","text":"Every request fetches the exchange rates again; cache them for ten minutes."}');
INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_2315a0000002AaBbCcDdEeFf02', 'ses_dce9a1f0bffeQm2XkV7pLr4TzN', 1796126401000, 1796126401000, '{"parentID":"msg_2315a0000001AaBbCcDdEeFf01","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/home/ada/fx","root":"/home/ada/fx"},"cost":0.002,"tokens":{"total":7800,"input":0,"output":10,"reasoning":0,"cache":{"write":30,"read":7760}},"modelID":"claude-sonnet-4-5","providerID":"anthropic","time":{"created":1796126401000,"completed":1796126401500},"finish":"tool-calls"}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_2315a0000201Xx', 'msg_2315a0000002AaBbCcDdEeFf02', 'ses_dce9a1f0bffeQm2XkV7pLr4TzN', 1796126401000, 1796126401000, '{"type":"step-start"}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_2315a0000202Xx', 'msg_2315a0000002AaBbCcDdEeFf02', 'ses_dce9a1f0bffeQm2XkV7pLr4TzN', 1796126401100, 1796126401100, '{"type":"tool","tool":"bash","callID":"toolu_fx_1","state":{"status":"completed","input":{"command":"rg -n fetch_rates src","description":"Find the rate fetch"},"output":"src/rates.rs:14: pub async fn fetch_rates() -> Rates {","title":"Find the rate fetch","metadata":{"exit":0},"time":{"start":1796126401100,"end":1796126401200}}}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_2315a0000203Xx', 'msg_2315a0000002AaBbCcDdEeFf02', 'ses_dce9a1f0bffeQm2XkV7pLr4TzN', 1796126401500, 1796126401500, '{"reason":"tool-calls","type":"step-finish","tokens":{"total":7800,"input":0,"output":10,"reasoning":0,"cache":{"write":30,"read":7760}},"cost":0.002}');
INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_2315a0000003AaBbCcDdEeFf03', 'ses_dce9a1f0bffeQm2XkV7pLr4TzN', 1796126401600, 1796126401600, '{"parentID":"msg_2315a0000001AaBbCcDdEeFf01","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/home/ada/fx","root":"/home/ada/fx"},"cost":0.003,"tokens":{"total":7900,"input":0,"output":40,"reasoning":0,"cache":{"write":80,"read":7780}},"modelID":"claude-sonnet-4-5","providerID":"anthropic","time":{"created":1796126401600,"completed":1796126403000},"finish":"stop"}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_2315a0000301Xx', 'msg_2315a0000003AaBbCcDdEeFf03', 'ses_dce9a1f0bffeQm2XkV7pLr4TzN', 1796126401600, 1796126401600, '{"type":"step-start"}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_2315a0000302Xx', 'msg_2315a0000003AaBbCcDdEeFf03', 'ses_dce9a1f0bffeQm2XkV7pLr4TzN', 1796126401700, 1796126401700, '{"type":"text","text":"fetch_rates in src/rates.rs has no cache; I will wrap it in a ten-minute exchange rate cache keyed by currency pair.","time":{"start":1796126401700,"end":1796126402900}}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_2315a0000303Xx', 'msg_2315a0000003AaBbCcDdEeFf03', 'ses_dce9a1f0bffeQm2XkV7pLr4TzN', 1796126403000, 1796126403000, '{"reason":"stop","type":"step-finish","tokens":{"total":7900,"input":0,"output":40,"reasoning":0,"cache":{"write":80,"read":7780}},"cost":0.003}');
INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_2315a0000004AaBbCcDdEeFf04', 'ses_dce9a1f0bffeQm2XkV7pLr4TzN', 1796126430000, 1796126430000, '{"role":"user","time":{"created":1796126430000},"agent":"build","model":{"providerID":"anthropic","modelID":"claude-sonnet-4-5"}}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_2315a0000401Xx', 'msg_2315a0000004AaBbCcDdEeFf04', 'ses_dce9a1f0bffeQm2XkV7pLr4TzN', 1796126430000, 1796126430000, '{"type":"text","text":"Go ahead."}');
INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_2315a0000005AaBbCcDdEeFf05', 'ses_dce9a1f0bffeQm2XkV7pLr4TzN', 1796126431000, 1796126431000, '{"parentID":"msg_2315a0000004AaBbCcDdEeFf04","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/home/ada/fx","root":"/home/ada/fx"},"modelID":"claude-sonnet-4-5","providerID":"anthropic","time":{"created":1796126431000,"completed":1796126433000},"finish":"stop"}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_2315a0000501Xx', 'msg_2315a0000005AaBbCcDdEeFf05', 'ses_dce9a1f0bffeQm2XkV7pLr4TzN', 1796126431000, 1796126431000, '{"type":"text","text":"Rates are cached for ten minutes per currency pair."}');
INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_2315a0000006AaBbCcDdEeFf06', 'ses_dce9a1f0cffeChildTaskSub01', 1796126401200, 1796126401200, '{"role":"user","time":{"created":1796126401200},"agent":"explore"}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_2315a0000601Xx', 'msg_2315a0000006AaBbCcDdEeFf06', 'ses_dce9a1f0cffeChildTaskSub01', 1796126401200, 1796126401200, '{"type":"text","text":"(subagent) list the callers of fetch_rates"}');
