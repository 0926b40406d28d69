@_exported import Leash

/// Logging for Leash: a logger interceptor, cURL rendering and secret redaction.
///
/// The logger arrives in the next release; the module already builds so that apps can
/// depend on it.
public enum LeashLogging {}
