import Foundation
import BackgroundTasks
import FoundationOnlyFiles
import Glibc
import Testing

/// Darwin's `sysctlbyname` as Linux answers it (Sources/FoundationCompat/Sysctl.swift), with
/// Darwin's size query and errors.
@Suite struct SysctlTests {
    static func machine() -> String {
        var names = utsname()
        _ = uname(&names)
        return withUnsafeBytes(of: names.machine) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
    }

    @Test func theMachineIsReadAsAnSDKReadsIt() {
        #expect(FoundationOnlyFiles.DeviceModel.identifier == Self.machine())
        #expect(!Self.machine().isEmpty)
    }

    @Test func numbersAreWrittenInTheirWidths() {
        var processors: Int32 = 0
        var size = MemoryLayout<Int32>.size
        #expect(sysctlbyname("hw.ncpu", &processors, &size, nil, 0) == 0)
        #expect(Int(processors) == ProcessInfo.processInfo.activeProcessorCount && size == 4)
        var memory: UInt64 = 0
        size = MemoryLayout<UInt64>.size
        #expect(sysctlbyname("hw.memsize", &memory, &size, nil, 0) == 0)
        #expect(memory == ProcessInfo.processInfo.physicalMemory && size == 8)
    }

    @Test func badCallsFailWithDarwinsErrors() {
        var size = 0
        errno = 0
        #expect(sysctlbyname("hw.nothing", nil, &size, nil, 0) == -1 && errno == ENOENT)
        // A buffer too small: ENOMEM, and the size needed.
        var small = [CChar](repeating: 0, count: 1)
        size = 1
        #expect(sysctlbyname("kern.ostype", &small, &size, nil, 0) == -1 && errno == ENOMEM && size == 6)
        // A write: nothing can be set.
        var value: Int32 = 1
        #expect(sysctlbyname("hw.ncpu", nil, &size, &value, 4) == -1 && errno == EPERM)
        #expect(sysctlbyname(nil, nil, &size, nil, 0) == -1 && errno == EINVAL)
        #expect(sysctlbyname("hw.ncpu", nil, nil, nil, 0) == -1 && errno == EINVAL)
    }
}
