import Foundation

// bgtask: the command-line tool of swift-background-tasks.
switch CommandLineParser.parse(Array(CommandLine.arguments.dropFirst())) {
case .failure(let error):
    FileHandle.standardError.write(Data("bgtask: \(error.message)\n\n\(CommandLineParser.usage)\n".utf8))
    exit(64)
case .success(.help):
    print(CommandLineParser.usage)
case .success(.version):
    print("bgtask 0.1.0 (swift-background-tasks)")
case .success(.demo(let days)):
    do {
        print(try await Demo.run(days: days), terminator: "")
    } catch {
        FileHandle.standardError.write(Data("bgtask demo: \(error)\n".utf8))
        exit(1)
    }
}
