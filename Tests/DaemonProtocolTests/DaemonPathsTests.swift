import DaemonProtocol
import Foundation
import Testing

/// docs/protocol.md, "Socket paths and permissions": where the socket and state live, from
/// an environment given explicitly.
@Suite struct DaemonPathsTests {
    @Test func runtimeAndStateHomeAreUsed() throws {
        let resolved = try DaemonPaths.resolve(environment: ["XDG_RUNTIME_DIR": "/run/user/1000", "XDG_STATE_HOME": "/home/a/.state", "HOME": "/home/a"], uid: 1000)
        #expect(resolved.socketPath == "/run/user/1000/bgtaskd/socket")
        #expect(resolved.socketDirectory == "/run/user/1000/bgtaskd")
        #expect(resolved.stateDirectory == "/home/a/.state/bgtaskd")
        #expect(resolved.warnings.isEmpty)
    }

    @Test func withoutRuntimeDirTheSocketIsInAPerUserTmpDirectoryWithAWarning() throws {
        let resolved = try DaemonPaths.resolve(environment: ["HOME": "/home/a"], uid: 1234)
        #expect(resolved.socketPath == "/tmp/bgtaskd-1234/socket")
        #expect(resolved.socketDirectory == "/tmp/bgtaskd-1234")
        #expect(resolved.stateDirectory == "/home/a/.local/state/bgtaskd")
        #expect(resolved.warnings.count == 1)
        #expect(resolved.warnings.first?.contains("XDG_RUNTIME_DIR is not set") == true)
        #expect(resolved.warnings.first?.contains("/tmp/bgtaskd-1234") == true)
    }

    @Test func relativeXDGValuesAreIgnoredWithAWarning() throws {
        let resolved = try DaemonPaths.resolve(environment: ["XDG_RUNTIME_DIR": "run", "XDG_STATE_HOME": "state", "HOME": "/h"], uid: 7)
        #expect(resolved.socketPath == "/tmp/bgtaskd-7/socket")
        #expect(resolved.stateDirectory == "/h/.local/state/bgtaskd")
        #expect(resolved.warnings.contains { $0.contains("XDG_RUNTIME_DIR=run is not an absolute path") })
        #expect(resolved.warnings.contains { $0.contains("XDG_STATE_HOME=state is not an absolute path") })
    }

    @Test func overridesWinAndRelativeOnesAreMadeAbsolute() throws {
        let resolved = try DaemonPaths.resolve(
            environment: ["XDG_RUNTIME_DIR": "/run/user/1"], socketOverride: "sock/./s", stateOverride: "/var/x/../state",
            uid: 1, currentDirectory: "/work"
        )
        #expect(resolved.socketPath == "/work/sock/s")
        #expect(resolved.socketDirectory == "/work/sock")
        #expect(resolved.stateDirectory == "/var/state")
        #expect(resolved.warnings.isEmpty)
    }

    @Test func noStateDirectoryIsAClearError() {
        #expect {
            try DaemonPaths.resolve(environment: ["XDG_RUNTIME_DIR": "/run/user/1"], uid: 1)
        } throws: { error in
            "\(error)".contains("neither XDG_STATE_HOME nor HOME") && "\(error)".contains("--state-dir")
        }
    }

    @Test func aSocketPathTooLongForSunPathIsRefused() {
        let long = "/" + String(repeating: "d", count: 120)
        #expect {
            try DaemonPaths.resolve(environment: ["XDG_RUNTIME_DIR": long, "HOME": "/h"], uid: 1)
        } throws: { error in
            "\(error)".contains("over the limit of 107") && "\(error)".contains(long)
        }
    }
}

/// The checks on the socket's directory, on real directories in a temporary place.
@Suite struct SocketDirectoryTests {
    @Test func aMissingDirectoryIsCreatedPrivate() throws {
        let scratch = try TemporaryDirectory()
        let directory = scratch.path + "/bgtaskd"
        try DaemonPaths.prepareSocketDirectory(directory, uid: getuid())
        var info = stat()
        #expect(lstat(directory, &info) == 0)
        #expect(info.st_mode & 0o7777 == 0o700)
        // A second time it is accepted as it is.
        try DaemonPaths.prepareSocketDirectory(directory, uid: getuid())
    }

    @Test func aSymbolicLinkIsRefused() throws {
        let scratch = try TemporaryDirectory()
        let target = scratch.path + "/target"
        #expect(mkdir(target, 0o700) == 0)
        let link = scratch.path + "/bgtaskd"
        #expect(symlink(target, link) == 0)
        #expect {
            try DaemonPaths.prepareSocketDirectory(link, uid: getuid())
        } throws: { error in
            "\(error)".contains(link) && "\(error)".contains("a symbolic link, not a directory")
        }
    }

    @Test func aDirectoryWithOtherModeIsRefusedNamingItsMode() throws {
        let scratch = try TemporaryDirectory()
        let directory = scratch.path + "/bgtaskd"
        #expect(mkdir(directory, 0o700) == 0)
        #expect(chmod(directory, 0o755) == 0)
        #expect {
            try DaemonPaths.prepareSocketDirectory(directory, uid: getuid())
        } throws: { error in
            "\(error)".contains(directory) && "\(error)".contains("mode is 0755, not 0700") && "\(error)".contains("owner uid \(getuid())")
        }
    }

    @Test func aDirectoryOfAnotherOwnerIsRefused() throws {
        let scratch = try TemporaryDirectory()
        let directory = scratch.path + "/bgtaskd"
        #expect(mkdir(directory, 0o700) == 0)
        // As root (the test machine), hand it to nobody; as anyone else, check it is ours
        // and ask for another uid instead.
        let other: UInt32
        if getuid() == 0 {
            #expect(chown(directory, 65534, 65534) == 0)
            other = 0
        } else {
            other = getuid() + 1
        }
        #expect {
            try DaemonPaths.prepareSocketDirectory(directory, uid: other)
        } throws: { error in
            "\(error)".contains(directory) && "\(error)".contains("not to uid \(other)") && "\(error)".contains("another user may have created it")
        }
    }

    @Test func aRegularFileIsRefused() throws {
        let scratch = try TemporaryDirectory()
        let file = scratch.path + "/bgtaskd"
        #expect(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
        #expect {
            try DaemonPaths.prepareSocketDirectory(file, uid: getuid())
        } throws: { error in
            "\(error)".contains("a regular file, not a directory")
        }
    }

    @Test func aMissingParentIsAnErrorNotACreation() throws {
        let scratch = try TemporaryDirectory()
        let directory = scratch.path + "/missing/bgtaskd"
        #expect {
            try DaemonPaths.prepareSocketDirectory(directory, uid: getuid())
        } throws: { error in
            "\(error)".contains("cannot create the socket directory \(directory)")
        }
    }
}
