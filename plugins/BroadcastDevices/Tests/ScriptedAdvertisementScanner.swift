import BLETransport

/// A scanner that yields a script of advertisements, then stays open until cancelled (as a
/// scanner with nothing more to hear).
struct ScriptedAdvertisementScanner: AdvertisementScanner {
    let script: [Advertisement]
    var path: ScanPath? { .discovery }

    func advertisements(matching matches: [AdvertisementMatch]) -> AsyncThrowingStream<Advertisement, any Error> {
        AsyncThrowingStream { continuation in
            for advertisement in script { continuation.yield(advertisement) }
        }
    }
}
