import Glibc

/// A shared library opened at run time with dlopen(3), for ``LazyLibrary``: how libsystemd (sd-bus), libcurl,
/// libmosquitto, libdeflate and libmicrohttpd are loaded, so that a gateway that does not use
/// one never maps it (nor its TLS and protocol dependencies) and building the catalog or checking
/// a configuration loads nothing.
///
/// - `RTLD_NOW` resolves every undefined symbol of the library and its dependencies at open, so a
///   broken installation fails here, not in the middle of a transfer; `RTLD_LOCAL` keeps its
///   symbols out of the global namespace.
/// - A library is never passed to dlclose(3) once an entry point of it was handed out: a thread
///   the library started (libcurl's resolver, libmosquitto's network loop) may still run its code.
///   dlopen(3) counts references, so several users share one mapping.
/// - Not Sendable: the handle stays with the one thread that opens the library and resolves its
///   entry points. What is shared are the entry points, C function pointers (see ``resolve(_:as:)``).
public struct DynamicLibrary {
    /// The soname or path handed to dlopen(3).
    public let path: String
    private let handle: UnsafeMutableRawPointer

    /// Opens `path`, a soname searched for like any shared library (ld.so(8)) or a path. Blocks
    /// while the loader maps the library: call it from a queue of its own, not the cooperative pool.
    /// - Throws: ``DynamicLibraryError`` with dlerror(3)'s text.
    public static func open(_ path: String) throws(DynamicLibraryError) -> DynamicLibrary {
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
            throw DynamicLibraryError(library: path, symbol: nil, reason: lastLoaderError())
        }
        return DynamicLibrary(path: path, handle: handle)
    }

    /// The entry point `name`, whose C type is `Function`: the function's own pointer type (each
    /// shim.h declares it from the library's header with `__typeof__`), or ``VariadicEntryPoint``
    /// for a variadic function. Function and data pointers share one representation wherever
    /// dlsym(3) exists (POSIX).
    ///
    /// A C function pointer is Sendable (it captures nothing), so a table of entry points is a
    /// plain struct the compiler checks; the address stays valid from any thread because the
    /// library is never unloaded once it was handed out.
    /// - Throws: ``DynamicLibraryError`` naming the missing symbol.
    public func resolve<Function>(_ name: String, as _: Function.Type) throws(DynamicLibraryError) -> Function {
        _ = dlerror()  // clears an earlier error, so the text read after a failure is this one's
        guard let address = dlsym(handle, name) else {
            throw DynamicLibraryError(library: path, symbol: name, reason: Self.lastLoaderError())
        }
        return unsafeBitCast(address, to: Function.self)
    }

    /// Closes a library none of whose entry points was handed out (a resolve failed).
    public func abandon() {
        dlclose(handle)
    }

    /// dlerror(3)'s text for the failure that just happened on this thread.
    private static func lastLoaderError() -> String {
        dlerror().map { String(cString: $0) } ?? "unknown dynamic loader error"
    }
}

/// The type a variadic C function's entry point is resolved as: C's generic function pointer,
/// `void (*)(void)`. Swift can neither call a variadic C function nor keep its pointer type (it
/// imports as `OpaquePointer`, which is not Sendable), so the shim's typed wrapper takes this and
/// converts it back to the variadic prototype before calling: C allows converting a function
/// pointer to another function pointer type and back (C11 6.3.2.3p8), and only the call must use
/// the function's own type.
public typealias VariadicEntryPoint = @convention(c) () -> Void

/// A library that could not be opened, or lacks an entry point.
public struct DynamicLibraryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The soname or path handed to dlopen(3).
    public var library: String
    /// The missing entry point; nil when the library itself could not be opened.
    public var symbol: String?
    /// dlerror(3)'s text.
    public var reason: String

    public var description: String {
        symbol.map { "\(library) has no \($0): \(reason)" } ?? "cannot load \(library): \(reason)"
    }
}
