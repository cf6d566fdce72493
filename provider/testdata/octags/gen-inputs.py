# Random Markdown-like inputs for answers.mjs (see there): SEED N MODE.
import json, random, sys
seed=int(sys.argv[1]); n=int(sys.argv[2]); mode=sys.argv[3]
random.seed(seed)
frags=["Hello"," world","a","b c","`","``","```","~~~","`x`","``y``","\n","\n\n","\r\n","    ","  ","\t","- ","* ","1. ","> ","| a | b |\n|---|---|\n","| ","|","<think>","</think>","<thinking>","</thinking>","<think","</th","ink>","<internal>","</internal>","<div>","</div>","< think >","<think/>","<thought a=\"x>y\">","<reasoning>","</reasoning>","<","a < b",">","\"","'","é","💡","\u00a0","# h","---","***","[l](u)","<http://x.y>","\\`","<THINK>","<thinking>","</thinking>","<mm:think>"]
if mode.startswith("prose"):
    frags=["Hello"," world"," the","a","b c","`","``","```","~~~","`x`","``y``","`a b`","\n","\n","\n\n","\r\n"," ","  ","# h","## ","<think>","</think>","<thinking>","</thinking>","<think","</th","ink>","<internal>","</internal>","<div>","<","a < b",">","\\`","\\","<http://x.y>","<a@b.c>","<http://a`b>","é","💡","**b**","_e_","```go\n","\n```\n","~~~~\n","<think/>","<thought x=\"a>b\">"]
    mode=mode[5:] or "part"
out=[]
for i in range(n):
    k=random.randint(1,14)
    text="".join(random.choice(frags) for _ in range(k))
    if mode=="own":
        out.append(json.dumps({"own":text}))
    else:
        # random chunking
        cuts=sorted(random.sample(range(1,len(text)),min(len(text)-1,random.randint(0,4)))) if len(text)>1 else []
        chunks=[]; prev=0
        for c in cuts+[len(text)]:
            chunks.append(text[prev:c]); prev=c
        out.append(json.dumps({"chunks":chunks,"strict":random.random()<0.1}))
print("\n".join(out))
