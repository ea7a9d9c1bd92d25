//! Checker tests: source text in, hir types and conversions or error messages out.
