pub mod check;
pub mod convert;
pub mod extract;
pub mod fmt;
pub mod infer;
pub mod info;
pub mod run;
pub mod set_dims;
