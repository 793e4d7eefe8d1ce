//! Placeholder: wire bodies.
