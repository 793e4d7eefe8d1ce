//! The cost tracker's clock: wall time plus a fixed offset, so tests can put "today" just
//! before a UTC midnight. The offset is 0 outside tests (the binary reads it from
//! `LORE_TEST_CLOCK_OFFSET_MS` in one test-clock helper and nowhere else).

use lore_storage::memory::day_of;

/// Wall time shifted by a fixed offset.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Clock {
    offset_ms: i64,
}

impl Clock {
    /// Wall time.
    pub fn system() -> Self {
        Self::default()
    }

    /// Wall time shifted by `offset_ms` (negative is the past).
    pub fn with_offset(offset_ms: i64) -> Self {
        Self { offset_ms }
    }

    /// The offset in force.
    pub fn offset_ms(&self) -> i64 {
        self.offset_ms
    }

    /// Now, ms since the epoch.
    pub fn now_ms(&self) -> u64 {
        self.shift(lore_storage::now_ms())
    }

    /// A wall-clock time (ms since the epoch, as callers stamp their messages) on this clock.
    pub fn shift(&self, wall_ms: u64) -> u64 {
        wall_ms.saturating_add_signed(self.offset_ms)
    }

    /// Today's UTC date on this clock (`YYYY-MM-DD`).
    pub fn today(&self) -> String {
        day_of(self.now_ms())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_offset_moves_today() {
        let clock = Clock::with_offset(86_400_000);
        assert_eq!(clock.shift(0), 86_400_000);
        assert_eq!(day_of(clock.shift(0)), "1970-01-02");
        assert_eq!(Clock::with_offset(-10).shift(5), 0);
        assert_eq!(Clock::system().shift(42), 42);
    }
}
