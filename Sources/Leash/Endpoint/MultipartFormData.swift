import Foundation

/// A `multipart/form-data` body of text fields and files.
///
/// ```swift
/// var form = MultipartFormData()
/// form.append("Ada", name: "name")
/// form.append(avatarPNG, name: "avatar", fileName: "ada.png", mimeType: "image/png")
/// // return `form` from the endpoint's `parameters` with a POST, PUT or PATCH
/// ```
///
/// Leash sets `Content-Type: multipart/form-data; boundary=…` unless the endpoint set one.
public struct MultipartFormData: Sendable {
    /// One field or file of the form.
    struct Part: Sendable {
        var name: String
        var fileName: String?
        var mimeType: String?
        var data: Data
    }

    /// The boundary between parts; random unless given.
    public let boundary: String
    private(set) var parts: [Part] = []

    /// Creates an empty form.
    ///
    /// - Parameter boundary: The boundary between parts. The default is random, so it cannot
    ///   occur in the content by chance.
    public init(boundary: String = "leash-" + UUID().uuidString) {
        self.boundary = boundary
    }

    /// The `Content-Type` header value, boundary included (in quotes when it holds a space or
    /// one of `()<>@,;:/[]?=`, as RFC 2045 requires of such parameter values).
    public var contentType: String {
        let needsQuotes = boundary.contains { " ()<>@,;:/[]?=".contains($0) }
        return "multipart/form-data; boundary=" + (needsQuotes ? "\"\(boundary)\"" : boundary)
    }

    /// Appends a text field.
    ///
    /// - Parameters:
    ///   - value: The field's text, sent as UTF-8.
    ///   - name: The field's name.
    public mutating func append(_ value: String, name: String) {
        parts.append(Part(name: name, fileName: nil, mimeType: nil, data: Data(value.utf8)))
    }

    /// Appends a file, or a field whose content is raw bytes.
    ///
    /// - Parameters:
    ///   - data: The content.
    ///   - name: The field's name.
    ///   - fileName: The file name the server sees; `nil` sends a plain field.
    ///   - mimeType: The part's `Content-Type`; defaults to `application/octet-stream` for files.
    public mutating func append(_ data: Data, name: String, fileName: String? = nil, mimeType: String? = nil) {
        parts.append(Part(name: name, fileName: fileName, mimeType: mimeType, data: data))
    }

    /// The encoded body.
    ///
    /// - Throws: ``LeashError/encoding(_:)`` when the boundary is not one RFC 2046 allows, when
    ///   a name, file name or MIME type holds a line break, or when the content holds the
    ///   boundary.
    public func encode() throws -> Data {
        guard Self.isValid(boundary: boundary) else {
            throw LeashError.encoding(
                EncodingProblem(
                    "The boundary '\(boundary)' is not 1 to 70 letters, digits or '()+_,-./:=? ' "
                        + "(not ending in a space), as RFC 2046 requires."))
        }
        let delimiter = Data("--\(boundary)".utf8)
        var body = Data()
        for part in parts {
            if part.data.range(of: delimiter) != nil {
                throw LeashError.encoding(EncodingProblem("The content of part '\(part.name)' holds the boundary."))
            }
            var head = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(try quoted(part.name))\""
            if let fileName = part.fileName {
                head += "; filename=\"\(try quoted(fileName))\""
            }
            head += "\r\n"
            if let mimeType = part.mimeType ?? (part.fileName == nil ? nil : "application/octet-stream") {
                head += "Content-Type: \(try quoted(mimeType))\r\n"
            }
            head += "\r\n"
            body.append(Data(head.utf8))
            body.append(part.data)
            body.append(Data("\r\n".utf8))
        }
        body.append(Data("--\(boundary)--\r\n".utf8))
        return body
    }

    /// Whether `boundary` is what RFC 2046 allows: 1 to 70 of its characters, the last not a
    /// space. Anything else could break the `Content-Type` header or the body.
    static func isValid(boundary: String) -> Bool {
        let bytes = Array(boundary.utf8)
        guard (1...70).contains(bytes.count), bytes.last != UInt8(ascii: " ") else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                return true
            default:
                return "'()+_,-./:=? ".utf8.contains(byte)
            }
        }
    }

    /// Escapes quotes the way browsers do and refuses line breaks, which would end the header.
    private func quoted(_ text: String) throws -> String {
        guard !text.contains(where: \.isNewline) else {
            throw LeashError.encoding(
                EncodingProblem("'\(text)' holds a line break, which a part header cannot carry."))
        }
        return text.replacingScalars("\"", with: "%22")
    }
}
