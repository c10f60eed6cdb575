// The Clang module os declares nothing: the Swift module os (Sources/os) has the API.
