//! JSON pieces shared below the rules.

pub(crate) mod string;
