// os.log declares nothing: `import os.log` loads the Swift module os (Sources/os).
