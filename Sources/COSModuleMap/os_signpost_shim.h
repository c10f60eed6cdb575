// os.signpost declares nothing: `import os.signpost` loads the Swift module os (Sources/os), with OSSignposter and os_signpost.
