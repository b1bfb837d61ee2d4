import pandas as pd
import numpy as np

df = pd.read_csv('/workspace/data.csv')
print(df.describe())
np.save('/workspace/out.npy', df.values)
