import Foundation

extension String {
    /// The first `limit` Unicode scalars of the string, with `...` after them when some
    /// were left out: a bounded excerpt for a message or a log row.
    ///
    /// Bounded by scalars, not by `Character`s: one grapheme cluster can hold any number of
    /// combining scalars (`"a"` and 500,000 U+0301 is one `Character` of 1 MB), so a
    /// prefix of characters bounds nothing an attacker controls.
    public func excerpt(scalars limit: Int) -> String {
        var taken = String.UnicodeScalarView()
        var index = unicodeScalars.startIndex
        while index != unicodeScalars.endIndex {
            guard taken.count < limit else { return String(taken) + "..." }
            taken.append(unicodeScalars[index])
            index = unicodeScalars.index(after: index)
        }
        return self
    }
}
