/// Checks one of a core's invariants. Broken, it is reported to `report` when one is set (the
/// simulator, which ends that seed with its trace and goes on with the others) and otherwise stops the
/// process with a precondition failure, at the step that broke it.
@inline(__always)
func invariant(_ holds: Bool, _ what: @autoclosure () -> String, report: ((String) -> Void)?) {
    guard !holds else { return }
    if let report {
        report(what())
    } else {
        preconditionFailure(what())
    }
}
