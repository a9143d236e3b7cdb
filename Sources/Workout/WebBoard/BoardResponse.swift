/// One HTTP answer of the board, before the server hands it to libmicrohttpd.
struct BoardResponse: Sendable, Equatable {
    /// The status code.
    var status: Int
    /// The `Content-Type`.
    var contentType: String
    /// The body.
    var body: [UInt8]
    /// Further headers.
    var headers: [String: String] = [:]

    /// A UTF-8 text answer.
    static func text(_ status: Int, _ contentType: String, _ text: String, headers: [String: String] = [:]) -> BoardResponse {
        BoardResponse(status: status, contentType: contentType + "; charset=utf-8", body: Array(text.utf8), headers: headers)
    }
}
