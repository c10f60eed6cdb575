// Placeholder: the daemon end-to-end tests' app (filled in by the tests' author).
import BackgroundTasks
print("bgtask-daemon-testapp")
