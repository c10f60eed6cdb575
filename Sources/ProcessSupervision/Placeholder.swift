enum ProcessSupervisionPlaceholder {}
