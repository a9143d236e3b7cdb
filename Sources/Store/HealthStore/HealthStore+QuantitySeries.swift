extension HealthStore {
    /// Closes the quantity series nothing was added to for their policy's gap (the devices went
    /// away), on the writer's monotonic clock; a transaction only when there is one to close.
    /// - Returns: how many it closed.
    @discardableResult
    public func closeIdleSeries() async throws(StoreError) -> Int {
        try await requireWriter().perform { writer throws(StoreError) in try writer.closeIdleSeriesNow() }
    }

    /// Closes every quantity series this store's writer was adding to, in one transaction: no
    /// reading will follow (the bus finished), and the followers still running send the final
    /// versions. A series another process left open stays as it is.
    public func closeSeries() async throws(StoreError) {
        try await requireWriter().perform { writer throws(StoreError) in try writer.transaction { try writer.closeAllSeries() } }
    }
}
