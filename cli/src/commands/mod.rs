pub mod convert;
pub mod info;
