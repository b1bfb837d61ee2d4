import ast, base64
blob = base64.b64decode(s)
value = ast.literal_eval(base64.b64decode(s).decode())
exec_count = 3
