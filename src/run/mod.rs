//! The run layer: the evaluator that runs a plan, the variable store,
//! guards and the test request. It imports the layers below it.

pub mod eval;
pub mod guards;
pub mod store;
pub mod test_request;
