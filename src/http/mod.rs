//! The HTTP surface: the route table and the error shapes.

pub mod errors;
pub mod routes;
