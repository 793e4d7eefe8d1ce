//! Percentiles and the markdown rows the benchmark prints.

use std::time::Duration;

/// Sorted samples in microseconds.
pub struct Samples(Vec<f64>);

impl Samples {
    pub fn new(durations: impl IntoIterator<Item = Duration>) -> Samples {
        let mut values: Vec<f64> = durations
            .into_iter()
            .map(|d| d.as_secs_f64() * 1e6)
            .collect();
        values.sort_by(f64::total_cmp);
        Samples(values)
    }

    /// The q-quantile (nearest rank), 0 when empty.
    pub fn quantile(&self, q: f64) -> f64 {
        if self.0.is_empty() {
            return 0.0;
        }
        let rank = ((q * self.0.len() as f64).ceil() as usize).clamp(1, self.0.len());
        self.0[rank - 1]
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }
}

/// Formats microseconds for humans.
pub fn us(value: f64) -> String {
    if value.abs() >= 10_000.0 {
        format!("{:.1} ms", value / 1000.0)
    } else {
        format!("{value:.0} µs")
    }
}
