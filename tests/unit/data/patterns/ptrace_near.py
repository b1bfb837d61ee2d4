class Tracer:
    def __init__(self):
        self.ptrace_log = []
    def ptrace(self):
        return 'no'
