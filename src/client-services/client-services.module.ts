import { Module } from '@nestjs/common';
import { ClientServicesController } from './client-services.controller';
import { ClientServicesService } from './client-services.service';
import { AuthModule } from '../auth/auth.module';

@Module({
  imports: [AuthModule],
  controllers: [ClientServicesController],
  providers: [ClientServicesService],
  exports: [ClientServicesService],
})
export class ClientServicesModule {}
