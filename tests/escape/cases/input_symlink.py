# Staging an input that is a symlink (passwd-link -> /etc/passwd, under
# the inputs root): mcp-exec must refuse the run before starting anything,
# naming the symlink, rather than copying the host file into /inputs.
# file: passwd-link
# expect_refused: symlink
import os
print(open("/inputs/passwd-link").read())
