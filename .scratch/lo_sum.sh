.venv/bin/python .scratch/ln5_lo.py "$@" 2>&1 | python3 -c "
import sys,re
for line in sys.stdin:
    if not line.strip(): continue
    name=line.split()[0]; print(name, line.split()[1:3], 'serialized', len(re.findall('SerializedLoad', line)), 'wide:', len(re.findall(r\"load_text='LDG[^']*128\", line)), 'late_first_wide', 'late_first_wide=[]' not in line, line[line.find('max_batch'):].strip())"
