/// Lays text out in lines no wider than a terminal: words move to the next line whole, and a
/// word longer than a line is broken across lines. Nothing is ever cut off. Widths count
/// characters (extended grapheme clusters), which is a terminal's columns for the text the
/// gateway prints.
public struct TextWrapping: Sendable {
    /// The widest a line may be, indentation included; at least 1.
    public var width: Int
    /// The spaces that start every line but the first.
    public var indent: Int

    /// A layout of lines at most `width` wide whose continuation lines are indented by
    /// `indent` spaces (at most `width - 1`, so that every line has room for text).
    public init(width: Int, indent: Int = 0) {
        self.width = max(width, 1)
        self.indent = min(max(indent, 0), self.width - 1)
    }

    /// `label` (at the start of the first line, with its own trailing space if it wants one),
    /// then `pieces` separated by `separator`. A piece that fits on the current line goes
    /// there, else on the next; a piece wider than a line is wrapped at its spaces, and a word
    /// wider than a line is broken. Lines end without spaces.
    public func lines(label: String = "", _ pieces: [String], separator: String = " ") -> [String] {
        var lines: [String] = []
        var line = ""
        var lineHasText = false
        var hasContent = false
        func flush() {
            while line.last == " " { line.removeLast() }
            lines.append(line)
            line = String(repeating: " ", count: indent)
            lineHasText = false
            hasContent = false
        }
        func place(_ unit: Substring, after gap: String) {
            let joined = hasContent ? gap + unit : String(unit)
            if line.count + joined.count <= width {
                line += joined
            } else {
                if lineHasText { flush() }
                var rest = unit
                while line.count + rest.count > width {
                    let room = width - line.count
                    line += rest.prefix(room)
                    rest = rest.dropFirst(room)
                    flush()
                }
                line += rest
            }
            lineHasText = true
            hasContent = true
        }
        for character in label {
            if line.count == width { flush() }
            line.append(character)
            lineHasText = true
        }
        for piece in pieces where !piece.isEmpty {
            let fitsAfter = line.count + (hasContent ? separator.count : 0) + piece.count <= width
            if fitsAfter || indent + piece.count <= width {
                place(Substring(piece), after: separator)
                continue
            }
            // Wider than a line: word by word, starting on this line.
            for (index, word) in piece.split(separator: " ").enumerated() {
                place(word, after: index == 0 ? separator : " ")
            }
        }
        if lineHasText || lines.isEmpty { flush() }
        return lines
    }

    /// `text` wrapped at its spaces, continuation lines indented.
    public func lines(_ text: String) -> [String] {
        lines(text.split(separator: " ").map(String.init))
    }
}
