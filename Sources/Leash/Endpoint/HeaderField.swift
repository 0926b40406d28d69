/// Checks header names and values before they reach a transport.
///
/// Foundation silently drops a header value that holds CR or LF; Leash refuses it instead,
/// so a header injection attempt is an error rather than a request sent without the header.
enum HeaderField {
    static func isValid(name: String, value: String) -> Bool {
        guard !name.isEmpty else { return false }
        for byte in name.utf8 {
            // RFC 9110 token characters only.
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                continue
            default:
                guard "!#$%&'*+-.^_`|~".utf8.contains(byte) else { return false }
            }
        }
        return !value.utf8.contains { $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\n") || $0 == 0 }
    }
}
