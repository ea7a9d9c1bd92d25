//! acc: the embedding API. (Engine arrives with host execution, issue 3.)
pub use acc_lang as lang;
