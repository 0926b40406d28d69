@_exported import Leash

/// Reusable interceptors for Leash: token refresh, retry with backoff, validation, caching
/// and de-duplication.
///
/// The interceptors arrive in the next release; the module already builds so that apps can
/// depend on it.
public enum LeashInterceptors {}
