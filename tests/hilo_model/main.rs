//! (doc to come)

mod explorer;
mod model;

#[cfg(test)]
mod findings;
