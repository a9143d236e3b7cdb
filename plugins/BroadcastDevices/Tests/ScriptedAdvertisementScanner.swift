import BLETransport

/// A scanner that yields a script of advertisements, then stays open until cancelled (as a
/// scanner with nothing more to hear).
struct ScriptedAdvertisementScanner: AdvertisementScanner {
    let script: [Advertisement]
    /// What the scanner says it dropped before yielding.
    var dropped = 0
    var path: ScanPath? { .discovery }
    var droppedAdvertisements: Int { dropped }

    func advertisements(matching matches: [AdvertisementMatch]) -> AsyncThrowingStream<Advertisement, any Error> {
        AsyncThrowingStream { continuation in
            for advertisement in script { continuation.yield(advertisement) }
        }
    }
}
