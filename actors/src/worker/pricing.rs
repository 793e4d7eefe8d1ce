//! Placeholder: prices.
