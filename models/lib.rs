//! Nothing: the package exists for its test target (`cargo test -p yaraus-models`), the model checkers in `tests/models.rs` of the workspace root.
