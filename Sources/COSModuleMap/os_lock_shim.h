// os.lock declares nothing: `import os.lock` loads the Swift module os (Sources/os), which re-exports os_unfair_lock (COSLock).
