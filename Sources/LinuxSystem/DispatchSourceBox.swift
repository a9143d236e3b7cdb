import Dispatch

/// Carries a dispatch source across isolation domains.
///
/// libdispatch objects are thread-safe (dispatch_source_cancel and friends may be called from
/// any thread; see dispatch_object(3)), but swift-corelibs-libdispatch does not mark its source
/// protocols `Sendable`; this box states that fact in one place instead of silencing checks.
struct DispatchSourceBox<Source>: @unchecked Sendable {
    let source: Source
}
