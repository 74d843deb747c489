//! (doc to come)

mod explorer;
mod model;

#[cfg(test)]
mod checks;
#[cfg(test)]
mod findings;
#[cfg(test)]
mod liveness;
#[cfg(test)]
mod variants;
