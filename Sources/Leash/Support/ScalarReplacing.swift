extension String {
    /// The text with every occurrence of `target` replaced, matched Unicode scalar by scalar.
    ///
    /// `replacingOccurrences(of:with:)` compares `Character`s, and a quote followed by a
    /// combining mark is one `Character` in Swift: it would be left alone, yet it is still a
    /// quote on the wire, to a shell, and to a server splitting a header. Escaping that must
    /// hold uses this instead.
    package func replacingScalars(_ target: String, with replacement: String) -> String {
        let target = Array(target.unicodeScalars)
        guard let first = target.first else { return self }
        let scalars = Array(unicodeScalars)
        var result = String.UnicodeScalarView()
        var index = 0
        while index < scalars.count {
            if scalars[index] == first, scalars[index...].starts(with: target) {
                result.append(contentsOf: replacement.unicodeScalars)
                index += target.count
            } else {
                result.append(scalars[index])
                index += 1
            }
        }
        return String(result)
    }
}
