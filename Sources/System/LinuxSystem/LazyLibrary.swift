import Synchronization

/// A native library opened with dlopen(3) on first use, instead of being linked: a process maps
/// it (and its TLS and protocol dependencies) only when a plugin that needs it starts.
///
/// - Nothing is loaded by the initializer; ``entryPoints()`` opens the library and runs `bind`,
///   which resolves every entry point the plugin calls and runs the library's own initialization.
/// - A success is kept. A failure is not: the next call tries again, so installing the library
///   while the gateway runs is enough for the plugin's next attempt.
/// - The library stays mapped for the life of the process once an entry point was handed out
///   (see ``DynamicLibrary``); when `bind` fails, nothing of it is in use and it is closed.
/// - Thread-safe: loading is serialized by a lock. It blocks while the loader maps the library:
///   call it from a queue of its own, not from the cooperative pool.
/// - `EntryPoints` is a plain struct of the C function pointers `bind` resolved (the function
///   types from the library's header, ``VariadicEntryPoint`` for a variadic one). The compiler
///   checks that it is Sendable, which a C function pointer is; that an address stays valid on
///   every thread for the life of the process is this type's part: the library is never unloaded
///   once `bind` returned. Whether the library's own objects may be shared is each caller's
///   concern, stated where it holds them.
public final class LazyLibrary<EntryPoints: Sendable>: Sendable {
    /// The soname or path handed to dlopen(3).
    public let path: String
    private let remedy: String
    private let bind: @Sendable (Binder) throws(NativeLibraryError) -> EntryPoints
    private let state = Mutex<EntryPoints?>(nil)

    /// - Parameters:
    ///   - path: a soname, searched for like any shared library (ld.so(8)), or a path.
    ///   - remedy: what to install when loading fails, ending every ``NativeLibraryError``.
    ///   - bind: resolves the entry points and initializes the library.
    public init(path: String, remedy: String, bind: @escaping @Sendable (Binder) throws(NativeLibraryError) -> EntryPoints) {
        self.path = path
        self.remedy = remedy
        self.bind = bind
    }

    /// The entry points, loading the library first if needed.
    public func entryPoints() throws(NativeLibraryError) -> EntryPoints {
        try state.withLock { (loaded: inout EntryPoints?) throws(NativeLibraryError) -> EntryPoints in
            if let loaded { return loaded }
            let library: DynamicLibrary
            do throws(DynamicLibraryError) {
                library = try DynamicLibrary.open(path)
            } catch {
                throw NativeLibraryError(library: path, step: .open, reason: error.reason, remedy: remedy)
            }
            do throws(NativeLibraryError) {
                let entryPoints = try bind(Binder(library: library, remedy: remedy))
                loaded = entryPoints
                return entryPoints
            } catch {
                library.abandon()
                throw error
            }
        }
    }

    /// The entry points if a load succeeded, without loading: for pairing a successful
    /// initialization with the library's cleanup.
    public var loadedEntryPoints: EntryPoints? {
        state.withLock { $0 }
    }

    /// What `bind` works with: the opened library, and errors that name it and the remedy.
    public struct Binder {
        let library: DynamicLibrary
        let remedy: String

        /// The entry point `name`, whose C type is `Function` (declared by the plugin's shim.h).
        public func resolve<Function>(_ name: String, as type: Function.Type) throws(NativeLibraryError) -> Function {
            do throws(DynamicLibraryError) {
                return try library.resolve(name, as: type)
            } catch {
                throw NativeLibraryError(library: library.path, step: .resolve(symbol: name), reason: error.reason, remedy: remedy)
            }
        }

        /// The error for a library whose own initialization failed, with its text.
        public func initializationFailed(_ reason: String) -> NativeLibraryError {
            NativeLibraryError(library: library.path, step: .initialize, reason: reason, remedy: remedy)
        }
    }
}

/// A native library could not be loaded, so the plugin that needs it cannot work.
public struct NativeLibraryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Where loading stopped.
    public enum Step: Sendable, Hashable {
        /// dlopen(3) failed: the library is missing, or it or a dependency cannot be loaded.
        case open
        /// The library opened but lacks an entry point (another library, or too old a version).
        case resolve(symbol: String)
        /// The library's own initialization failed.
        case initialize
    }

    /// The soname or path handed to dlopen(3).
    public var library: String
    public var step: Step
    /// dlerror(3)'s text, or the library's own for ``Step/initialize``.
    public var reason: String
    /// What to install, e.g. "The mqtt sink needs libmosquitto 1 at run time: install libmosquitto1".
    public var remedy: String

    public init(library: String, step: Step, reason: String, remedy: String) {
        self.library = library
        self.step = step
        self.reason = reason
        self.remedy = remedy
    }

    public var description: String {
        let what = switch step {
        case .open: "cannot load \(library)"
        case .resolve(let symbol): "cannot find \(symbol) in \(library)"
        case .initialize: "cannot initialize \(library)"
        }
        return "\(what): \(reason). \(remedy)"
    }
}
