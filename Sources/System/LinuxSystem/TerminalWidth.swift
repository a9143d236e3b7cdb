import CLinuxSystem

/// How wide the terminal behind a descriptor is, for output laid out in its columns.
public enum TerminalWidth {
    /// The columns of the terminal `descriptor` refers to (TIOCGWINSZ, tty_ioctl(4)), or nil
    /// when it is not a terminal (a pipe, a file) or reports no width. Asked again each time, so
    /// a resized window is seen at the next call.
    public static func columns(of descriptor: Int32) -> Int? {
        let columns = hg_terminal_columns(descriptor)
        return columns > 0 ? Int(columns) : nil
    }
}
