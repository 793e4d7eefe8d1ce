//! Charts drawn on the server as inline SVG: stacked bars, one bar per turn or per day, one
//! colour class (`s1`…`s4`, styled by `app.css`) per series, a tooltip (`<title>`) per segment.
//! No script and no style attribute, so the strict Content-Security-Policy holds.

use std::fmt::Write as _;

/// One bar: its label and one value per series.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    /// Shown under the bar (every few bars when there are many).
    pub label: String,
    /// One value per series, stacked bottom up.
    pub values: Vec<f64>,
}

/// How values are written on the axis and in tooltips.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Token counts (1.2k, 3.4M).
    Tokens,
    /// US dollars.
    Dollars,
}

/// Escapes text for SVG.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// A value as the axis shows it.
pub fn format_value(value: f64, unit: Unit) -> String {
    match unit {
        Unit::Dollars if value < 0.01 && value > 0.0 => format!("${value:.4}"),
        Unit::Dollars => format!("${value:.2}"),
        Unit::Tokens if value >= 1_000_000.0 => format!("{:.1}M", value / 1_000_000.0),
        Unit::Tokens if value >= 1_000.0 => format!("{:.1}k", value / 1_000.0),
        Unit::Tokens => format!("{value:.0}"),
    }
}

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 240.0;
const LEFT: f64 = 56.0;
const BOTTOM: f64 = 28.0;
const TOP: f64 = 10.0;

/// Stacked bars. `series` names each value (in the tooltips); `title` is the chart's accessible
/// name.
pub fn stacked_bars(title: &str, series: &[&str], bars: &[Bar], unit: Unit) -> String {
    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{}" xmlns="http://www.w3.org/2000/svg"><title>{}</title>"#,
        escape(title),
        escape(title)
    );
    let max = bars
        .iter()
        .map(|b| b.values.iter().sum::<f64>())
        .fold(0.0_f64, f64::max);
    let plot_h = HEIGHT - BOTTOM - TOP;
    let plot_w = WIDTH - LEFT - 8.0;
    let scale = if max > 0.0 { plot_h / max } else { 0.0 };
    for step in 0..=4 {
        let value = max * f64::from(step) / 4.0;
        let y = HEIGHT - BOTTOM - value * scale;
        let _ = write!(
            svg,
            r#"<line class="axis" x1="{LEFT}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke-width="1"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"#,
            WIDTH - 8.0,
            LEFT - 4.0,
            y + 4.0,
            escape(&format_value(value, unit))
        );
    }
    if bars.is_empty() {
        let _ = write!(
            svg,
            r#"<text x="{}" y="{}" text-anchor="middle">nothing recorded yet</text></svg>"#,
            WIDTH / 2.0,
            HEIGHT / 2.0
        );
        return svg;
    }
    let slot = plot_w / bars.len() as f64;
    let bar_w = (slot * 0.8).max(1.0);
    let label_every = (bars.len() / 12).max(1);
    for (index, bar) in bars.iter().enumerate() {
        let x = LEFT + slot * index as f64 + (slot - bar_w) / 2.0;
        let mut base = HEIGHT - BOTTOM;
        let _ = write!(svg, r#"<g class="bar">"#);
        for (serie, value) in bar.values.iter().enumerate() {
            let h = value * scale;
            if h <= 0.0 {
                continue;
            }
            base -= h;
            let name = series.get(serie).copied().unwrap_or("");
            let _ = write!(
                svg,
                r#"<rect class="s{}" x="{x:.2}" y="{base:.2}" width="{bar_w:.2}" height="{h:.2}"><title>{}: {} {}</title></rect>"#,
                serie % 5 + 1,
                escape(&bar.label),
                escape(&format_value(*value, unit)),
                escape(name)
            );
        }
        let _ = write!(svg, "</g>");
        if index % label_every == 0 {
            let _ = write!(
                svg,
                r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
                x + bar_w / 2.0,
                HEIGHT - BOTTOM + 16.0,
                escape(&bar.label)
            );
        }
    }
    svg.push_str("</svg>");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_stack_and_text_is_escaped() {
        let svg = stacked_bars(
            "turns <1>",
            &["input", "cache read"],
            &[
                Bar {
                    label: "1".into(),
                    values: vec![100.0, 0.0],
                },
                Bar {
                    label: "2".into(),
                    values: vec![10.0, 90.0],
                },
            ],
            Unit::Tokens,
        );
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert!(svg.contains("turns &lt;1&gt;"));
        assert_eq!(
            svg.matches("<rect").count(),
            3,
            "a zero segment draws nothing"
        );
        assert!(svg.contains("2: 90 cache read"));
        assert!(!svg.contains("style="));
        let empty = stacked_bars("none", &["a"], &[], Unit::Dollars);
        assert!(empty.contains("nothing recorded yet"));
    }

    #[test]
    fn values_read_well() {
        assert_eq!(format_value(1_500.0, Unit::Tokens), "1.5k");
        assert_eq!(format_value(2_500_000.0, Unit::Tokens), "2.5M");
        assert_eq!(format_value(0.5, Unit::Dollars), "$0.50");
        assert_eq!(format_value(0.0012, Unit::Dollars), "$0.0012");
    }
}
