from django.contrib.auth.decorators import login_required
from django.http import HttpResponse


@login_required
def board(request):
    return HttpResponse("Control Tower")
