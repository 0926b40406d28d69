import Foundation

// libFuzzer target for the multipart encoder: random boundaries, names, file names, MIME
// types and contents must either be refused with LeashError.encoding or encode to a body that
// parses back into exactly the parts that went in.

struct Part: Equatable {
    var name: String
    var fileName: String?
    var mimeType: String?
    var data: Data
}

/// The libFuzzer entry point: builds one input for the multipart encoder from the bytes and checks it;
/// a broken promise traps, which libFuzzer reports as a crash.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    var input = Input(Array(UnsafeBufferPointer(start: start, count: count)))
    let boundary = input.byte() % 4 == 0 ? input.string() : "leash-fuzz"
    var form = MultipartFormData(boundary: boundary)
    var parts: [Part] = []
    for _ in 0..<Int(input.byte() % 5) where !input.isAtEnd {
        let name = input.string()
        switch input.byte() % 3 {
        case 0:
            let text = input.string()
            form.append(text, name: name)
            parts.append(Part(name: name, data: Data(text.utf8)))
        case 1:
            let data = input.data()
            let fileName = input.string()
            form.append(data, name: name, fileName: fileName)
            parts.append(Part(name: name, fileName: fileName, mimeType: "application/octet-stream", data: data))
        default:
            let data = input.data()
            let fileName = input.string()
            let mimeType = input.string()
            form.append(data, name: name, fileName: fileName, mimeType: mimeType)
            parts.append(Part(name: name, fileName: fileName, mimeType: mimeType, data: data))
        }
    }
    let body: Data
    do {
        body = try form.encode()
    } catch let error as LeashError {
        guard case .encoding = error else { fatalError("not an encoding error: \(error)") }
        return 0
    } catch {
        fatalError("not a LeashError: \(error)")
    }
    // Whatever was accepted is safe in a header: not empty, no line break, quote or NUL.
    require(
        !boundary.isEmpty && !boundary.utf8.contains { [13, 10, 0, UInt8(ascii: "\"")].contains($0) },
        "accepted the boundary \(boundary.debugDescription)")
    require(parse(body, boundary: boundary) == parts.map(escaped), "did not parse back: \(parts) → \(body as NSData)")
    return 0
}

/// How the encoder writes a part's header values: quotes escaped as %22.
func escaped(_ part: Part) -> Part {
    var part = part
    part.name = escapingQuotes(part.name)
    part.fileName = part.fileName.map(escapingQuotes)
    part.mimeType = part.mimeType.map(escapingQuotes)
    return part
}

/// Byte by byte, as the wire sees it: a quote followed by a combining mark is one `Character`
/// in Swift but still a quote byte (the fuzzer found the encoder leaving those raw).
func escapingQuotes(_ text: String) -> String {
    String(decoding: text.utf8.flatMap { $0 == UInt8(ascii: "\"") ? Array("%22".utf8) : [$0] }, as: UTF8.self)
}

/// Splits a body the way a server does: at CRLF "--" boundary, headers up to the blank line.
func parse(_ body: Data, boundary: String) -> [Part]? {
    let bytes = [UInt8](body)
    let opening = [UInt8]("--\(boundary)".utf8)
    let delimiter = [UInt8]("\r\n--\(boundary)".utf8)
    guard bytes.starts(with: opening) else { return nil }
    var parts: [Part] = []
    var index = opening.count
    while true {
        let rest = bytes[index...]
        if rest.starts(with: Array("--\r\n".utf8)) { return index + 4 == bytes.count ? parts : nil }
        guard rest.starts(with: Array("\r\n".utf8)) else { return nil }
        index += 2
        guard let headerEnd = find(Array("\r\n\r\n".utf8), in: bytes, from: index),
            let next = find(delimiter, in: bytes, from: headerEnd + 4)
        else { return nil }
        var part = Part(name: "", data: Data(bytes[(headerEnd + 4)..<next]))
        for line in lines(bytes[index..<headerEnd]) {
            // Unicode scalars, not Characters: a quote followed by a combining mark is one
            // Character in Swift, but still a quote on the wire.
            let scalars = line.unicodeScalars
            let prefix = "Content-Disposition: form-data; name=\"".unicodeScalars
            if scalars.starts(with: prefix) {
                let fields = scalars.dropFirst(prefix.count)
                guard let nameEnd = fields.firstIndex(of: "\"") else { return nil }
                part.name = String(String.UnicodeScalarView(fields[..<nameEnd]))
                let after = fields[fields.index(after: nameEnd)...]
                let file = "; filename=\"".unicodeScalars
                if after.starts(with: file), after.last == "\"" {
                    part.fileName = String(String.UnicodeScalarView(after.dropFirst(file.count).dropLast()))
                } else if !after.isEmpty {
                    return nil
                }
            } else if scalars.starts(with: "Content-Type: ".unicodeScalars) {
                part.mimeType = String(String.UnicodeScalarView(scalars.dropFirst("Content-Type: ".count)))
            } else {
                return nil
            }
        }
        parts.append(part)
        index = next + delimiter.count
    }
}

func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
    guard needle.count <= haystack.count, start <= haystack.count - needle.count else { return nil }
    for index in start...(haystack.count - needle.count)
    where haystack[index..<index + needle.count].elementsEqual(needle) {
        return index
    }
    return nil
}

/// The CRLF-separated lines of a part header, split byte by byte.
func lines(_ bytes: ArraySlice<UInt8>) -> [String] {
    var result: [String] = []
    var start = bytes.startIndex
    var index = bytes.startIndex
    while index < bytes.endIndex {
        if bytes[index] == 13, index + 1 < bytes.endIndex, bytes[index + 1] == 10 {
            result.append(String(decoding: bytes[start..<index], as: UTF8.self))
            index += 2
            start = index
        } else {
            index += 1
        }
    }
    result.append(String(decoding: bytes[start..<bytes.endIndex], as: UTF8.self))
    return result
}
