import Foundation

extension UsageModel {
    /// The local day of `date` (days since 1970 in the model's time zone), for daily budgets.
    public func localDay(of date: Date) -> Int {
        LocalWeek(utcOffset: configuration.utcOffset).localDay(of: date)
    }

    /// The instant local day `day` starts.
    public func startOfLocalDay(_ day: Int) -> Date {
        LocalWeek(utcOffset: configuration.utcOffset).start(ofLocalDay: day)
    }
}
