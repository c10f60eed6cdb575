import Foundation

extension UsageModel {
    /// The local day of `date` (days since 1970 in the model's time zone), for daily budgets.
    public func localDay(of date: Date) -> Int {
        Int(((date.timeIntervalSince1970 + configuration.utcOffset) / 86_400).rounded(.down))
    }

    /// The instant local day `day` starts.
    public func startOfLocalDay(_ day: Int) -> Date {
        Date(timeIntervalSince1970: Double(day) * 86_400 - configuration.utcOffset)
    }
}
