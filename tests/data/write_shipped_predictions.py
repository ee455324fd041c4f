#!/usr/bin/env python3
# Writes shipped_predictions.json: every shipped checkpoint's predictions at fixed random points,
# made by `npe predict` (the binary given). ShippedCheckpoints.PredictAsWhenTheyWereShipped checks
# that later code loads each checkpoint and predicts the same. Run it again after retraining a
# shipped model (with the npe of that commit): python3 tests/data/write_shipped_predictions.py NPE
import json, random, subprocess, glob, os, csv, sys
random.seed(0)
root=os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'models')
root=os.path.normpath(root)
npe=sys.argv[1]
tmp=sys.argv[2] if len(sys.argv) > 2 else '/tmp'
out={'generated_by':'tests/data/write_shipped_predictions.py NPE (npe predict)','checkpoints':[]}
for pt in sorted(glob.glob(root+'/gp1d/*.pt')+glob.glob(root+'/tfmnist/*.pt')+glob.glob(root+'/era5/*.pt')):
    m=json.load(open(pt+'.json'))['model']
    dx,dy=m['dim_x'],m['dim_y']; df=m.get('dim_features',0)
    task=os.path.basename(os.path.dirname(pt))
    if task=='in-progress': task=os.path.basename(pt).split('-')[0]
    def point():
        if task=='gp1d': return [round(random.uniform(-2,2),4)]
        if task=='tfmnist': return [float(random.randint(0,27)) for _ in range(dx)]
        coords=[float(random.randint(0,14)),float(random.randint(0,14)),0.0][:dx-df]
        return coords+[round(random.uniform(0,1),4) for _ in range(df)]
    xc=[point() for _ in range(12)]; yc=[[round(random.gauss(0,1),4) for _ in range(dy)] for _ in xc]
    xt=[point() for _ in range(6)]
    xn=['x'] if dx==1 else ['x%d'%(i+1) for i in range(dx)]
    yn=['y'] if dy==1 else ['y%d'%(i+1) for i in range(dy)]
    with open(tmp+'/c.csv','w') as f:
        f.write(','.join(xn+yn)+'\n')
        for a,b in zip(xc,yc): f.write(','.join(map(str,a+b))+'\n')
    with open(tmp+'/t.csv','w') as f:
        f.write(','.join(xn)+'\n')
        for a in xt: f.write(','.join(map(str,a))+'\n')
    subprocess.run([npe,'predict','--checkpoint',pt,'--context',tmp+'/c.csv','--targets',tmp+'/t.csv','--out',tmp+'/o.csv'],check=True,capture_output=True)
    rows=list(csv.DictReader(open(tmp+'/o.csv')))
    mean=[[float(r[k]) for k in rows[0] if k.startswith('mean')] for r in rows]
    std=[[float(r[k]) for k in rows[0] if k.startswith('std')] for r in rows]
    out['checkpoints'].append({'path':os.path.relpath(pt,root),'created_at':json.load(open(pt+'.json'))['created_at'],'xc':xc,'yc':yc,'xt':xt,'mean':mean,'std':std})
json.dump(out,open(os.path.join(os.path.dirname(os.path.abspath(__file__)),'shipped_predictions.json'),'w'),indent=1)
