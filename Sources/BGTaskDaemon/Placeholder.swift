enum BGTaskDaemonPlaceholder {}
